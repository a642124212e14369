"""Table maintenance (issue 22): policy types and their content, the job a trigger schedules, and trigger rules."""
