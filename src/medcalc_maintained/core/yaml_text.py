"""YAML text, read strictly and within bounds, and written safely: the one home of the project's YAML rules.

:func:`load_yaml` refuses aliases and merge keys, duplicate keys, impossible dates, text over
:data:`YAML_MAX_BYTES` and collections nested deeper than :data:`YAML_MAX_DEPTH`, each naming the line;
:func:`compose_yaml` gives the node tree (where each value stands) within the same bounds.
"""

from __future__ import annotations

# The largest YAML text :func:`load_yaml` reads: 8x the 0.65 MB campaign ledger of 887 records. A
# safety bound against hostile files (not a tuning knob), so it lives here rather than in defaults.yaml.
YAML_MAX_BYTES = 16 * 1024 * 1024


def _safe_loader():
    """PyYAML's safe loader, libyaml's C parser where PyYAML has it."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _strict_loader():
    """A safe YAML loader (libyaml's C parser when PyYAML has it: ~7x faster on the campaign ledger)
    that refuses aliases and merge keys (a few hundred bytes of aliases can expand to gigabytes),
    duplicate mapping keys (the last one would silently win) and impossible dates, naming the line."""
    from yaml.constructor import ConstructorError

    base = _safe_loader()

    def refuse(problem: str, node) -> ConstructorError:
        return ConstructorError(None, None, problem, node.start_mark)

    class Strict(base):
        def construct_object(self, node, deep=False):
            if node in self.constructed_objects or node in self.recursive_objects:
                raise refuse("aliases (*name) are not allowed: the value anchored here is reused; write it out", node)
            return super().construct_object(node, deep=deep)

        def flatten_mapping(self, node):
            seen: dict[object, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise refuse("merge keys (<<) are not allowed; write the keys out", key_node)
                key = (key_node.tag, key_node.value) if isinstance(key_node.value, str) else id(key_node)
                if key in seen:
                    raise refuse(f"duplicate key {key_node.value!r} (first at line {seen[key]}); "
                                 "each key may appear once", key_node)
                seen[key] = key_node.start_mark.line + 1
            super().flatten_mapping(node)

        def construct_yaml_timestamp(self, node):
            try:
                return super().construct_yaml_timestamp(node)
            except (ValueError, OverflowError) as exc:
                raise refuse(f"{node.value!r} is not a valid date ({exc})", node) from None

    Strict.add_constructor("tag:yaml.org,2002:timestamp", Strict.construct_yaml_timestamp)
    return Strict


def load_yaml(text: str, where: str | None = None):
    """YAML text to Python objects, safely and strictly (see :func:`_strict_loader`); text over
    :data:`YAML_MAX_BYTES` is refused before parsing. Problems raise ``yaml.YAMLError`` with the line
    in ``problem_mark``; ``where`` (the file) is only used in the size message."""
    import yaml

    if len(text) > YAML_MAX_BYTES:
        raise yaml.YAMLError(f"{where or 'YAML text'}: {len(text)} characters, over the {YAML_MAX_BYTES}-byte "
                             "limit for a YAML file")
    _check_depth(text)
    return yaml.load(text, Loader=_strict_loader())


def compose_yaml(text: str, where: str | None = None):
    """The node tree of YAML text (``yaml.compose``: each node with its ``start_mark`` and ``end_mark``,
    nothing constructed), within the same bounds as :func:`load_yaml` (size, nesting); for a reader
    that needs where a value stands in the text, not only the value. Problems raise ``yaml.YAMLError``."""
    import yaml

    if len(text) > YAML_MAX_BYTES:
        raise yaml.YAMLError(f"{where or 'YAML text'}: {len(text)} characters, over the {YAML_MAX_BYTES}-byte "
                             "limit for a YAML file")
    _check_depth(text)
    return yaml.compose(text, Loader=_safe_loader())


YAML_MAX_DEPTH = 100  # a ledger record nests 4 levels; the parser recurses once per level and died near 100,000


def _check_depth(text: str) -> None:
    """Refuse collections nested deeper than :data:`YAML_MAX_DEPTH`, naming the line, from the tokens alone."""
    import yaml
    from yaml.composer import ComposerError

    depth = 0
    for token in yaml.scan(text, Loader=_safe_loader()):
        depth += isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken, yaml.BlockSequenceStartToken,
                                    yaml.BlockMappingStartToken)) - isinstance(token, (yaml.FlowSequenceEndToken,
                                                                                         yaml.FlowMappingEndToken, yaml.BlockEndToken))
        if depth > YAML_MAX_DEPTH:
            raise ComposerError(None, None, f"nesting deeper than {YAML_MAX_DEPTH} levels", token.start_mark)


def safe_load(stream):
    """``yaml.safe_load`` with libyaml's C parser where PyYAML has it (the same objects, 5-10x faster:
    dvc.yaml in 0.03 s instead of 0.4 s), for the readers that used ``yaml.safe_load`` (params,
    dvc.yaml, dvc.lock, the package's tables, a card's front matter); a ledger file, or any file whose
    aliases, duplicate keys or size must be refused, goes through :func:`load_yaml`."""
    import yaml

    return yaml.load(stream, Loader=_safe_loader())


def dump_yaml(obj, **options) -> str:
    """Python objects to YAML text, safely (libyaml's C emitter when available; same text)."""
    import yaml

    return yaml.dump(obj, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), **options)


