from tests.graph.models import diamond  # noqa: F401  (fixture)
