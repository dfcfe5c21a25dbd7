"""The docs' figure tables (README.md, doc/*.md) are what the committed benchmark results
render: a figure can only change through ``make bench`` (or ``scripts/render_figures.py``
after a benchmark)."""

import importlib.util

from ros_harness import REPO


def renderer():
    spec = importlib.util.spec_from_file_location("render_figures",
                                                  REPO / "scripts" / "render_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_readme_figure_table_is_rendered_from_the_committed_json():
    render = renderer()
    blocks = []
    for page in render.PAGES:
        text = page.read_text()
        blocks += [match.group(2) for match in render.BLOCK.finditer(text)]
        assert render.render(text) == text, f"{page.name}: figures are stale: run " \
            "scripts/render_figures.py"
    assert sorted(blocks) == sorted(render.RENDER), "a renderer without a block, or the reverse"


def test_a_changed_result_changes_the_table(monkeypatch):
    render = renderer()
    original = render.load

    def load(name: str) -> dict:
        data = original(name)
        if name == "graph_nav_upload":
            data["upload_ms"] *= 2
        return data

    text = (REPO / "doc" / "benchmarks.md").read_text()
    monkeypatch.setattr(render, "load", load)
    assert render.render(text) != text


def test_every_benchmark_result_says_where_and_when_it_was_measured():
    import json
    results = sorted((REPO / "benchmarks" / "results").glob("*.json"))
    benchmarks = {p.stem for p in (REPO / "benchmarks").glob("[!_]*.py")}
    assert benchmarks <= {p.stem for p in results}, "a benchmark without committed results"
    for path in results:
        data = json.loads(path.read_text())
        machine = data.get("machine", {})
        assert machine.get("cores") and machine.get("cpu"), f"{path.name}: no machine"
        assert data.get("measured_at", "").startswith("20"), f"{path.name}: no date"


def test_every_screenshot_in_the_docs_was_written_by_the_test_that_judged_it():
    """doc/images' screenshots carry the metadata their test writes (render_figures copies
    them as written): a picture placed by hand has none."""
    from PIL import Image

    render = renderer()
    for name in render.SHOTS:
        info = Image.open(render.IMAGES / name).info
        assert info.get("Software", "").startswith("test_description_rviz_e2e.py"), (name, info)
        assert info.get("Creation Time"), name
