"""The benchmark's tree dataset matches the Polaris suite's names and counts (results must stay comparable)."""

from __future__ import annotations

from tests.bench.polaris_dataset import TreeShape, tree_dataset


def test_default_tree_has_polaris_counts_and_breadth_first_names():
    dataset = tree_dataset(TreeShape())

    assert (len(dataset.namespaces), len(dataset.leaves), len(dataset.tables), len(dataset.views)) == (15, 8, 40, 24)
    assert dataset.namespaces[0] == ["NS_0"]
    assert dataset.namespaces[7] == ["NS_0", "NS_1", "NS_3", "NS_7"]
    assert dataset.tables[5] == (["NS_0", "NS_1", "NS_3", "NS_8"], "T_5")
    assert dataset.views[-1] == (["NS_0", "NS_2", "NS_6", "NS_14"], "V_23")


def test_parents_come_before_children_when_created_in_order():
    seen: set[tuple[str, ...]] = set()
    for namespace in tree_dataset(TreeShape(breadth=3, depth=3)).namespaces:
        assert len(namespace) == 1 or tuple(namespace[:-1]) in seen
        seen.add(tuple(namespace))


def test_scaled_tree_holds_at_least_the_requested_tables():
    assert len(tree_dataset(TreeShape.scaled(100_000)).tables) == 100_000
    assert len(tree_dataset(TreeShape.scaled(1_001)).tables) == 1_008  # 8 leaves, 126 tables each
