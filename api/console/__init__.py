"""The web console at /ui: a static single-page app over the catalog's own JSON APIs, and offline API docs."""
