"""Markdown pages for Sphinx where myst-parser is not installed (conf.py prefers myst-parser):
CommonMark with tables, parsed by markdown-it-py into docutils nodes. Headings become nested
sections; a link to another page (``other.md``, ``other.md#part``) becomes a document
reference, so a link to a page that does not exist is a build warning; HTML comments are
left out. Nothing else of MyST (roles, directives) is understood."""

from docutils import nodes
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from sphinx import addnodes
from sphinx.parsers import Parser


class MarkdownParser(Parser):
    supported = ("markdown", "md")

    def parse(self, inputstring: str, document: nodes.document) -> None:
        tree = SyntaxTreeNode(MarkdownIt("commonmark").enable("table").parse(inputstring))
        env = getattr(document.settings, "env", None)
        docname = env.docname if env is not None else ""
        stack: list[tuple[int, nodes.Element]] = [(0, document)]
        for block in tree.children:
            if block.type == "heading":
                level = int(block.tag[1])
                while stack[-1][0] >= level:
                    stack.pop()
                title = _plain(block)
                section = nodes.section(names=[nodes.fully_normalize_name(title)])
                section += nodes.title(title, "", *_inline(block.children[0], docname))
                stack[-1][1].append(section)
                document.note_implicit_target(section)
                stack.append((level, section))
            else:
                stack[-1][1].extend(_block(block, docname))


def _block(node: SyntaxTreeNode, docname: str) -> list[nodes.Node]:
    kind = node.type
    if kind == "paragraph":
        return [nodes.paragraph("", "", *_inline(node.children[0], docname))]
    if kind in ("bullet_list", "ordered_list"):
        out = nodes.bullet_list() if kind == "bullet_list" else nodes.enumerated_list()
        for item in node.children:
            entry = nodes.list_item()
            for child in item.children:
                entry.extend(_block(child, docname))
            out += entry
        return [out]
    if kind in ("fence", "code_block"):
        text = node.content.rstrip("\n")
        block = nodes.literal_block(text, text)
        if node.info:
            block["language"] = node.info.split()[0]
        return [block]
    if kind == "blockquote":
        quote = nodes.block_quote()
        for child in node.children:
            quote.extend(_block(child, docname))
        return [quote]
    if kind == "table":
        return [_table(node, docname)]
    return []  # html_block (comments), hr


def _table(node: SyntaxTreeNode, docname: str) -> nodes.table:
    rows = [row for part in node.children for row in part.children]
    width = len(rows[0].children)
    group = nodes.tgroup(cols=width)
    group.extend(nodes.colspec(colwidth=1) for _ in range(width))
    for part in node.children:
        section = nodes.thead() if part.type == "thead" else nodes.tbody()
        for row in part.children:
            line = nodes.row()
            for cell in row.children:
                inline = cell.children[0] if cell.children else None
                content = _inline(inline, docname) if inline is not None else []
                line += nodes.entry("", nodes.paragraph("", "", *content))
            section += line
        group += section
    return nodes.table("", group)


def _inline(node: SyntaxTreeNode, docname: str) -> list[nodes.Node]:
    out: list[nodes.Node] = []
    for child in node.children:
        kind = child.type
        if kind == "text":
            out.append(nodes.Text(child.content))
        elif kind == "softbreak":
            out.append(nodes.Text(" "))
        elif kind == "hardbreak":
            out.append(nodes.Text("\n"))
        elif kind == "code_inline":
            out.append(nodes.literal(child.content, child.content))
        elif kind in ("em", "strong"):
            wrapper = nodes.emphasis() if kind == "em" else nodes.strong()
            wrapper.extend(_inline(child, docname))
            out.append(wrapper)
        elif kind == "link":
            out.append(_link(child, docname))
        elif kind == "image":
            out.append(nodes.image(uri=child.attrs["src"], alt=_plain(child)))
    return out


def _link(node: SyntaxTreeNode, docname: str) -> nodes.Node:
    href = str(node.attrs.get("href", ""))
    label = nodes.inline("", "", *_inline(node, docname))
    page = href.partition("#")[0]
    if page.endswith(".md") and "://" not in page:
        ref = addnodes.pending_xref("", label, refdomain="std", reftype="doc",
                                    reftarget=page[:-3], refexplicit=True, refdoc=docname,
                                    refwarn=True)
        return ref  # an anchor in another page: the page is checked, not the section
    return nodes.reference("", "", label, refuri=href)


def _plain(node: SyntaxTreeNode) -> str:
    """The text of a heading or image alt, without markup."""
    if node.type in ("text", "code_inline"):
        return node.content
    return "".join(_plain(child) for child in node.children)


def setup(app) -> dict:
    app.add_source_suffix(".md", "markdown")
    app.add_source_parser(MarkdownParser)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
