"""The shape of the code: paths only in the Project, small modules and functions, stages named
after dvc.yaml, the CLI kept out of the pipeline's dependencies."""

from __future__ import annotations

import ast
import re

import yaml

from medcalc_maintained.devtools.import_graph import parse
from tests.support.paths import ROOT

SRC = ROOT / "src" / "medcalc_maintained"
PATH_LITERAL = re.compile(r"""["'](?:data|build)/""")


def _modules():
    return sorted(p for p in SRC.rglob("*.py"))


def test_no_data_path_literal_outside_the_project_module():
    offenders = []
    for p in _modules():
        if p.name == "project.py":
            continue
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            if PATH_LITERAL.search(line):
                offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_no_module_over_500_lines_and_no_function_over_80():
    long_modules, long_functions = [], []
    for p in _modules():
        text = p.read_text(encoding="utf-8")
        if text.count("\n") > 500:
            long_modules.append(str(p.relative_to(ROOT)))
        for node in ast.walk(parse(p)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 80:
                    long_functions.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert long_modules == [] and long_functions == []


def test_every_dvc_stage_has_a_module_of_its_name_and_no_stage_depends_on_the_cli():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    for name, stage in stages.items():
        assert (SRC / "stages" / f"{name.replace('-', '_')}.py").is_file(), name
        deps = [str(d) for d in stage.get("deps", [])]
        assert any(d.endswith(f"stages/{name.replace('-', '_')}.py") for d in deps), (name, deps)
        assert not any("/cli" in d for d in deps), (name, deps)


def test_no_library_module_imports_a_stage():
    """Stages stand on the library, never the reverse: only ``stages/`` and the command line
    import a stage module (the upstream row lives in ``core/rows.py``)."""
    from medcalc_maintained.devtools.import_graph import PACKAGE, graph

    upward = sorted(f"{mod} -> {imp}" for mod, imports in graph(SRC).items() for imp in imports
                    if imp.startswith(f"{PACKAGE}.stages.")
                    and not mod.startswith((f"{PACKAGE}.stages", f"{PACKAGE}.cli")))
    assert upward == []


# package -> packages it must not import (imports inside functions count): the ledger reads the
# check findings as plain fields, and the evidence about one label never stands on review planning
NOT_IMPORTED = {"ledger": ("quality", "planning"), "quality": ("planning",)}


def test_the_ledger_stands_on_no_evidence_module_and_the_evidence_on_no_planning_module():
    from medcalc_maintained.devtools.import_graph import PACKAGE, graph

    found = sorted(f"{mod} -> {imp}" for mod, imports in graph(SRC).items() for imp in imports
                   for pkg, banned in NOT_IMPORTED.items() if mod.startswith(f"{PACKAGE}.{pkg}.")
                   for b in banned if imp == f"{PACKAGE}.{b}" or imp.startswith(f"{PACKAGE}.{b}."))
    assert found == []


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module of ``graph`` (module -> imported
    modules), each sorted; a package naming its own submodules is no cycle."""
    order, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w == v or w not in graph:
                continue
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return sorted(found)


def test_the_cycle_scan_finds_a_cycle_through_a_function_level_import():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}}) == [["a", "b", "c"]]
    assert import_cycles({"p": {"p", "p.x"}, "p.x": set()}) == []


def test_no_import_cycle_among_the_modules():
    """Imports inside functions count: a module pair that needs each other is one module or has
    a seam (devtools/import_graph.py reads every import of every module with ``ast``)."""
    from medcalc_maintained.devtools.import_graph import graph

    assert import_cycles(graph(SRC)) == []


# The floors of the package, lowest first: a folder imports only folders of lower floors (imports
# inside functions count), so the folders form no cycle even where no two modules do. Answer grading
# (grading/) stands below everything that grades -- the release's score shift, the harness adapters,
# scoring, the MCP tools -- and no module of release/ or harnesses/ imports scoring/.
FLOORS = (
    ("core",),
    ("project", "calculators", "devtools"),
    ("grading", "ledger", "planning", "quality", "conformance"),
    ("upstream", "verifiers", "review", "release"),
    ("contracts", "tools", "harnesses"),
    ("scoring",),
    ("stages",),
    ("cli",),
)


def folder_graph(modules: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The folders of ``package`` (its top-level packages; a top-level module counts as a folder of
    its name) -> the other folders their modules import (``modules``: module -> imported modules)."""
    def folder(name: str) -> str | None:
        parts = name.split(".")
        return parts[1] if parts[0] == package and len(parts) > 1 else None

    found: dict[str, set[str]] = {}
    for mod, imports in modules.items():
        if (source := folder(mod)) is not None:
            found.setdefault(source, set()).update(f for f in map(folder, imports) if f not in (None, source))
    return found


def upward_imports(folders: dict[str, set[str]], floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """``folder -> imported`` for each import of a folder on its own floor or one above it, and
    ``folder -> ?`` for a folder no floor names."""
    floor = {name: level for level, names in enumerate(floors) for name in names}
    upward = sorted(f"{src} -> {dst}" for src, imported in folders.items() for dst in imported
                    if src in floor and dst in floor and floor[dst] >= floor[src])
    return upward + sorted({f"{name} -> ?" for src, imported in folders.items() for name in (src, *imported)
                            if name not in floor})


def test_the_floor_scan_finds_a_folder_cycle_and_an_upward_import_that_no_module_cycle_shows():
    # no two modules import each other, yet low/ and high/ do: low.a -> high.b, high.c -> low.d
    modules = {"p": set(), "p.low.a": {"p.high.b"}, "p.low.d": set(), "p.high.b": set(), "p.high.c": {"p.low.d", "p"},
               "p.mid": {"p.low.d", "p.mid"}, "p.side.e": {"p.mid"}}
    assert import_cycles(modules) == []
    folders = folder_graph(modules, "p")
    assert folders == {"low": {"high"}, "high": {"low"}, "mid": {"low"}, "side": {"mid"}}
    assert import_cycles(folders) == [["high", "low"]]
    floors = (("low",), ("mid", "side"), ("high",))
    assert upward_imports(folders, floors) == ["low -> high", "side -> mid"]
    assert upward_imports(folders, (("low",), ("mid",), ("high",))) == ["low -> high", "side -> ?"]
    assert upward_imports({"mid": {"low"}, "low": set()}, floors) == []


def test_the_folders_form_no_cycle_and_import_only_lower_floors():
    """``grading/`` is the floor of answer grading: ``release/`` and ``harnesses/`` import it and never
    ``scoring/``; ``release``, ``scoring`` and ``tools`` import no folder that imports them."""
    from medcalc_maintained.devtools.import_graph import PACKAGE, graph

    folders = folder_graph(graph(SRC), PACKAGE)
    assert {"grading", "release", "harnesses", "scoring", "tools"} <= set(folders)  # never vacuous
    assert "grading" in folders["release"] and "grading" in folders["harnesses"]
    assert import_cycles(folders) == []
    assert upward_imports(folders, FLOORS) == []
    assert sorted(n for names in FLOORS for n in names) == sorted(folders)  # every folder has one floor


def test_the_upstream_columns_and_the_entities_literal_have_one_definition():
    defined = sorted(f"{p.relative_to(SRC)}: {line.strip()}" for p in _modules()
                     for line in p.read_text(encoding="utf-8").splitlines()
                     if re.match(r"\s*(UPSTREAM_COLUMNS\s*=|def parse_entities\b|def read_upstream_csv\b)", line))
    assert defined == ["core/rows.py: UPSTREAM_COLUMNS = [", "core/rows.py: def parse_entities(text: str) -> dict[str, Any]:",
                       "core/rows.py: def read_upstream_csv(path: Path) -> pd.DataFrame:"]


def test_only_core_rows_reads_the_entities_literal():
    """One entities parser: no other module evaluates a literal or keeps its own entities reader."""
    readers = sorted(f"{p.relative_to(SRC)}:{i}: {line.strip()}" for p in _modules()
                     for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                     if re.search(r"literal_eval|def _?entities(_of)?\(", line))
    assert [r for r in readers if not r.startswith("core/rows.py:")] == []


# What builds a release: the tables from the ledger, and the release directory from the tables.
BUILDERS = ("release.table_builder", "release.build")
# Only these modules (and the command line) may run a builder: the two stages that build.
BUILDING = ("stages.release_tables", "stages.release")


def builder_chains(imports: dict[str, set[str]], modules: list[str], builders: set[str]) -> list[str]:
    """``module -> ... -> builder`` for each of ``modules`` whose imports reach a module of
    ``builders`` (``imports``: module -> imported modules; the packages above a module run first,
    as in tests/import_graph.py), the shortest chain each."""
    def parents(name: str) -> list[str]:
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]

    chains = []
    for start in modules:
        came: dict[str, str | None] = {p: None for p in parents(start)}
        todo = list(came)
        while todo:
            mod = todo.pop(0)
            if mod in builders:
                chain = [mod]
                while came[chain[-1]] is not None:
                    chain.append(came[chain[-1]])
                chains.append(" -> ".join(reversed(chain)))
                break
            for imported in sorted(imports.get(mod, ())):
                for p in parents(imported):
                    if p not in came:
                        came[p] = mod
                        todo.append(p)
    return chains


def test_the_builder_scan_finds_a_chain_through_a_package_init():
    imports = {"s.labels": {"r.tables"}, "r.tables": set(), "r": {"r.builder"}, "r.builder": set(), "t": {"u.layout"}}
    assert builder_chains(imports, ["s.labels", "t"], {"r.builder"}) == ["s.labels -> r -> r.builder"]
    assert builder_chains({"s.labels": {"r.tables"}}, ["s.labels"], {"r.builder"}) == []


def test_readers_of_a_release_never_import_its_builder():
    """Reading a release (scoring, the contracts, the MCP tools, every stage but the two that
    build) imports only the stored tables (``release/tables.py``) and the layout of a built release
    (``release/layout.py``), never what applies the ledger or writes a release: no import chain,
    imports inside functions and package ``__init__`` files included, reaches a builder."""
    from medcalc_maintained.devtools.import_graph import PACKAGE, graph

    imports = graph(SRC)
    builders = {f"{PACKAGE}.{b}" for b in BUILDERS}
    allowed = builders | {f"{PACKAGE}.{b}" for b in BUILDING}
    readers = sorted(m for m in imports if m not in allowed and not m.startswith(f"{PACKAGE}.cli")
                     and m != f"{PACKAGE}.cli")
    for package in ("scoring", "contracts", "tools", "stages"):  # the rule covers them: never vacuous
        assert sum(m.startswith(f"{PACKAGE}.{package}.") for m in readers) >= 2, package
    assert builder_chains(imports, readers, builders) == []
    # and the two building stages do reach them (the names above are the modules that build)
    assert len(builder_chains(imports, [f"{PACKAGE}.{b}" for b in BUILDING], builders)) == 2


def test_the_card_front_matter_rule_has_one_definition():
    defined = sorted(f"{p.relative_to(SRC)}: {line.strip()}" for p in _modules()
                     for line in p.read_text(encoding="utf-8").splitlines()
                     if re.search(r"re\.compile\(r?[\"']\\A---", line))
    assert defined == ['release/layout.py: FRONT_MATTER = re.compile(r"\\A---\\n(.*?)\\n---\\n", re.S)']
