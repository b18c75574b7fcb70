"""A griffe extension for the API reference: bgfast's docstrings are written
for Sphinx (reStructuredText), the site renders Markdown.

Two constructs would show as raw text there, and are rewritten before
mkdocstrings renders a docstring:

* cross-reference roles, ``:class:`Position``` or ``:func:`~bgfast.cube.of```,
  become inline code with the text Sphinx shows (``Position``, ``of``);
* a doctest (a paragraph whose first line starts with ``>>>``) becomes a
  fenced ``pycon`` block (``tests/test_docs.py`` runs these examples);
* a paragraph ending in ``::`` (the literal block that follows it is an
  indented code block in Markdown too) ends in ``:``, and a line holding only
  ``::`` goes.

``mkdocs.yml`` loads this file by its path (``extensions:`` of the python
handler); it is not part of the package.
"""
from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:[a-z]+:)?(?:class|func|meth|attr|data|mod|exc|obj|const|ref):`([^`]+)`")
_LITERAL_ONLY = re.compile(r"^[ \t]*::[ \t]*\n", re.M)
_LITERAL_END = re.compile(r"(\S)::[ \t]*$", re.M)
_DOCTEST = re.compile(r"(?:^|(?<=\n\n))([ \t]*)(>>>.*?)(?=\n[ \t]*\n|\n?\Z)", re.S)


def _shown(target: str) -> str:
    """The text Sphinx shows for a role's target."""
    m = re.fullmatch(r"(.*?)\s*<[^>]+>", target)
    if m:                                  # :role:`text <target>`
        return m.group(1)
    if target.startswith("~"):             # :role:`~a.b.c` shows c
        return target[1:].rsplit(".", 1)[-1]
    return target


def markdown(text: str) -> str:
    """``text`` (a docstring in reStructuredText) with its roles and literal
    markers in Markdown."""
    text = _ROLE.sub(lambda m: f"`{_shown(m.group(1))}`", text)
    text = _DOCTEST.sub(lambda m: f"{m.group(1)}```pycon\n{m.group(1)}{m.group(2)}\n"
                                  f"{m.group(1)}```", text)
    text = _LITERAL_ONLY.sub("", text)
    return _LITERAL_END.sub(r"\1:", text)


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring with :func:`markdown` once the tree is built
    (``on_object`` sees every object but the package itself)."""

    def on_object(self, *, obj, **kwargs) -> None:
        _rewrite(obj)

    def on_package(self, *, pkg, **kwargs) -> None:
        _rewrite(pkg)


def _rewrite(obj) -> None:
    if obj.docstring is not None:
        obj.docstring.value = markdown(obj.docstring.value)
