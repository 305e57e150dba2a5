"""The sections of a LAS file, found by a plain line scan before lasio parses it.

The scan learns what lasio needs told and what a clear refusal needs to say: the version,
WRAP and DLM (the data delimiter), which section names the curves and which holds their data,
and the line number of every data row.  lasio (0.32) cannot learn these itself: it recognises
LAS 3.0 sections by case-sensitive names (``~LOG_DATA`` is not a data section to it), reads every
``~A``/``~Log_Data`` section of a file into the same curves (the last one wins, silently), does
not know which section names the columns of another data set (``~Drilling_Data``), drops the
empty fields of a TAB-delimited row, and reports a row of the wrong width as an array it cannot
reshape, or not at all when the values still fill whole rows.  Read by lasio alone, with
glassformer's checks on the ``LASFile``, 11 of the 96 files of lasio's own test corpus that
glassformer reads were lost and 1 read with wrong characters, 6 refused files were read
(misaligned or repaired) and 27 refusals named no line or the wrong cause.

LAS 1.2 and 2.0 name a section by its first letter (``~V``, ``~W``, ``~C``, ``~P``, ``~O``,
``~A``).  LAS 3.0 names sections in full and groups them in data sets: ``~Log_Definition`` (or
``~Curve``) names the columns of ``~Log_Data | Log_Definition`` (or ``~A``/``~ASCII``), and other
sets (``~Core_Definition``/``~Core_Data``, ``~Tops_...``, ``~Drilling_...``, or any name) may
follow.  glassformer reads one data section:

* the log data section (``~A`` in LAS 1.2/2.0; ``~Log_Data``, ``~A`` or ``~ASCII`` in LAS 3.0)
  when the file has exactly one; other LAS 3.0 data sets (core, tops, inclinometry ...) are not
  read;
* otherwise a LAS 3.0 file's only data section, whatever its name (e.g. ``~Drilling_Data``).

A file with several log data sections (several runs or passes), or with several LAS 3.0 data
sections none of which is the log, is refused with a message listing them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lasio.defaults import READ_SUBS
from lasio.reader import define_line_splitter

from ..errors import DataFileError

__all__ = ["LasLayout", "Section", "check_layout", "scan_las"]

_ITEM = {key: re.compile(rf"^\s*{key}\s*\.\s*([^\s:]*)", re.IGNORECASE) for key in ("VERS", "WRAP", "DLM")}
_DELIMITERS = ("SPACE", "TAB", "COMMA")
# lasio's own splitting of a space-delimited row: blanks separate fields, a quoted field stays whole.
_SPLIT_ON_BLANKS = define_line_splitter("SPACE")


@dataclass
class Section:
    """One ``~`` section: its title, where it starts, and its non-blank, non-comment lines."""

    title: str
    line: int
    body: list[tuple[int, str]] = field(default_factory=list)  # (line number, line as written)
    kind: str = "other"  # version | well | parameter | definition | data | other
    group: str = ""  # the LAS 3.0 data set ("LOG", "CORE", ...) a definition/data/parameter belongs to

    @property
    def name(self) -> str:
        """The section's name: the title's first word, e.g. ``Curve``, ``Log_Data``, ``A``."""
        return re.split(r"[\s|]", self.title, maxsplit=1)[0]

    @property
    def association(self) -> str:
        """For a LAS 3.0 data section, the definition named after ``|`` (upper-case), else ''."""
        return self.title.split("|", 1)[1].strip().split()[0].upper() if "|" in self.title else ""


@dataclass
class LasLayout:
    """What :func:`scan_las` found; ``definition`` and ``data`` are the sections to be read."""

    sections: list[Section]
    version: str | None
    wrap: str | None
    delimiter: str
    definition: Section | None
    data: Section
    parameter: Section | None = None

    @property
    def las3(self) -> bool:
        return self.version is not None and self.version.startswith("3")

    @property
    def data_label(self) -> str:
        """How messages name the data section: ``~A`` in LAS 1.2/2.0, its own name in LAS 3.0."""
        return f"~{self.data.name}" if self.las3 else "~A"

    def split(self, line: str) -> list[str]:
        """The fields of a data line under the file's delimiter."""
        if self.delimiter == "COMMA":
            return line.split(",")
        if self.delimiter == "TAB":
            return [f.strip() for f in line.split("\t")]
        if '"' not in line and "'" not in line:
            return line.split()
        return ["".join(groups) for groups in _SPLIT_ON_BLANKS(line)]

    def text_for_lasio(self, text: str, *, header: bool = False) -> str:
        """The file as lasio should see it: ~Version, ~Well, the chosen ~Curve and data section.

        Every other section is turned into comment lines (so line numbers stay the same), except
        with ``header=True``, which keeps the parameters of the chosen data set and ~Other (to
        carry a header over into a new file).  The chosen sections are titled ``~Curve``,
        ``~Parameter`` and ``~ASCII``, names lasio reads in every LAS version.  TAB- and
        COMMA-delimited rows are rewritten space-delimited with quoted fields (and the DLM item
        left out): lasio's TAB splitter drops empty fields, shifting the values after them, and
        for a COMMA file lasio switches its run-on repairs on.
        """
        keep = {id(s): s for s in self.sections if s.kind in ("version", "well")}
        titles = {id(self.data): "~ASCII"}
        if self.definition is not None:
            titles[id(self.definition)] = "~Curve"
        if header:
            keep.update({id(s): s for s in self.sections if s.kind == "other" and s.name[:1].upper() == "O"})
            if self.parameter is not None:
                titles[id(self.parameter)] = "~Parameter"
        lines = text.splitlines()
        out = list(lines)
        bounds = [s.line for s in self.sections] + [len(lines) + 1]
        for s, end in zip(self.sections, bounds[1:]):
            for n in range(s.line, end):
                if id(s) in titles:
                    out[n - 1] = titles[id(s)] if n == s.line else self._for_lasio(s, lines[n - 1])
                elif id(s) in keep:
                    out[n - 1] = "#" if _ITEM["DLM"].match(lines[n - 1]) else lines[n - 1]
                else:
                    out[n - 1] = "#" + lines[n - 1]
        return "\n".join(out) + "\n"

    def _for_lasio(self, section: Section, line: str) -> str:
        """A data line of a TAB- or COMMA-delimited file, space-delimited with quoted fields."""
        if section is not self.data or self.delimiter == "SPACE" or line.lstrip()[:1] in ("", "#"):
            return line
        fields = [f.strip() for f in self.split(line)]
        # An empty field of a delimited row is a missing value.
        return " ".join("NaN" if not f else f'"{f}"' if re.search(r"\s", f) else f for f in fields)


def _scan_sections(text: str) -> list[Section]:
    sections: list[Section] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if s.startswith("~"):
            sections.append(Section(title=s[1:].strip(), line=lineno))
        elif s and not s.startswith("#") and sections:
            sections[-1].body.append((lineno, line))
    return sections


def _version_items(sections: list[Section]) -> dict[str, str]:
    items: dict[str, str] = {}
    for section in sections:
        if section.name[:1].upper() != "V":
            continue
        for _, s in section.body:
            for key, pattern in _ITEM.items():
                if key not in items and (m := pattern.match(s)):
                    items[key] = m.group(1).upper()
        break
    return items


def _classify(section: Section, las3: bool) -> None:
    """Set ``kind`` and ``group``: by first letter in LAS 1.2/2.0, by name in LAS 3.0."""
    upper = section.name.upper()
    for marker, kind in (("_DEFINITION", "definition"), ("_DATA", "data"), ("_PARAMETER", "parameter")):
        if las3 and marker in upper:
            section.kind = kind
            group = section.association if kind == "data" and section.association else upper
            section.group = re.sub(r"\[\d+\]", "", group.replace("_DEFINITION", "").replace(marker, ""))
            return
    kinds = {"V": "version", "W": "well", "C": "definition", "P": "parameter", "A": "data", "O": "other"}
    section.kind = kinds.get(upper[:1], "other")
    if section.kind in ("definition", "parameter", "data"):
        section.group = "LOG"


def _listing(sections: list[Section]) -> str:
    return ", ".join(f"~{s.name} (line {s.line})" for s in sections)


def _choose_data(sections: list[Section], source: Path, las3: bool) -> Section:
    data = [s for s in sections if s.kind == "data"]
    log = [s for s in data if s.group == "LOG"]
    if len(log) == 1:
        return log[0]
    if len(log) > 1:
        raise DataFileError(
            f"{source}: {len(log)} log data sections ({_listing(log)}): several logs (runs or passes) "
            "in one file are not supported; save each log to its own file"
        )
    if not data:
        also = " or ~Log_Data" if las3 else ""
        found = ", ".join(f"~{s.title[:24].rstrip()} (line {s.line})" for s in sections)
        raise DataFileError(f"{source}: no ~A (ASCII data){also} section; sections found: {found}")
    if len(data) == 1:
        return data[0]
    raise DataFileError(
        f"{source}: LAS 3.0 file with {len(data)} data sections and no log data section "
        f"(~Log_Data or ~A): {_listing(data)}; glassformer reads a file's log data section or its "
        "only data section"
    )


def _choose_definition(sections: list[Section], data: Section, source: Path) -> Section | None:
    if data.association:
        named = [s for s in sections if s.name.upper() == data.association]
        if named:
            return named[0]
    candidates = [s for s in sections if s.kind == "definition" and s.group == data.group]
    if len(candidates) > 1:
        raise DataFileError(
            f"{source}: {len(candidates)} sections could name the columns of ~{data.name}: "
            f"{_listing(candidates)}; a LAS file needs exactly one"
        )
    return candidates[0] if candidates else None


def scan_las(text: str, source: Path) -> LasLayout:
    """Find the sections of a LAS file and choose the one data section to read.

    Parameters
    ----------
    text : str
        The whole file.
    source : Path
        The file, named in messages.

    Returns
    -------
    LasLayout
        ``definition`` is None when no section names the columns (the caller reports it).

    Raises
    ------
    DataFileError
        No ``~`` section at all; no data section; several log data sections; several LAS 3.0
        data sections none of which is the log; a DLM other than SPACE, TAB or COMMA.
    """
    sections = _scan_sections(text)
    if not sections:
        raise DataFileError(f"{source}: no ~ sections found; not a LAS file")
    items = _version_items(sections)
    version = items.get("VERS")
    las3 = version is not None and version.startswith("3")
    delimiter = items.get("DLM", "SPACE")  # a LAS 3.0 item; honoured in older files that declare it too
    if delimiter not in _DELIMITERS:
        raise DataFileError(f"{source}: DLM must be SPACE, TAB or COMMA, got {delimiter!r}")
    for section in sections:
        _classify(section, las3)
    data = _choose_data(sections, source, las3)
    definition = _choose_definition(sections, data, source)
    parameter = next((s for s in sections if s.kind == "parameter" and s.group == data.group), None)
    return LasLayout(sections, version, items.get("WRAP"), delimiter, definition, data, parameter)


def check_layout(layout: LasLayout, source: Path) -> bool:
    """Check the curve definitions, WRAP and the width of every data row; return True if wrapped.

    Raises
    ------
    DataFileError
        No section names the curves (or it lists none); a curve line that is not
        ``MNEM.UNIT ... : DESCRIPTION``; an empty data section; WRAP not YES/NO; a data row with
        the wrong number of values (naming the line and, where it can tell, why).
    """
    definition = layout.definition
    if definition is None or not definition.body:
        raise DataFileError(f"{source}: no ~Curve section (or it lists no curve); cannot name the data columns")
    for lineno, text in definition.body:
        if "." not in text:
            raise DataFileError(
                f"{source}: line {lineno} of the ~{definition.name} section is not a curve definition "
                f"(MNEM.UNIT  VALUE : DESCRIPTION): {text.strip()[:60]!r}"
            )
    if not layout.data.body:
        raise DataFileError(f"{source}: the {layout.data_label} data section (line {layout.data.line}) is empty")
    wrap = layout.wrap or "NO"
    if wrap not in ("YES", "NO"):
        raise DataFileError(f"{source}: WRAP must be YES or NO, got {layout.wrap!r}")
    widths = [(lineno, layout.split(text)) for lineno, text in layout.data.body]
    n = len(definition.body)
    if wrap == "YES":
        total = sum(len(fields) for _, fields in widths)
        if total % n:
            raise DataFileError(
                f"{source}: the wrapped {layout.data_label} section holds {total} values, not a multiple of "
                f"the {n} curves; the last depth step (ending line {widths[-1][0]}) is truncated"
            )
        return True
    for k, (lineno, fields) in enumerate(widths):
        if len(fields) != n:
            raise DataFileError(_width_message(layout, source, widths, k, n))
    return False


def _width_message(layout: LasLayout, source: Path, widths: list, k: int, n: int) -> str:
    """Say what is wrong with data row ``k``, which does not hold ``n`` values."""
    lineno, fields = widths[k]
    label = layout.data_label
    if len(widths) > 1 and len({len(f) for _, f in widths}) == 1:
        return (
            f"{source}: the ~{layout.definition.name} section names {n} curves but every line of the "
            f"{label} section holds {len(fields)} values"
        )
    start = f"{source}: line {lineno} of the {label} section has {len(fields)} values, expected {n}, one per curve of the ~Curve section"
    for field_ in fields:
        if set(field_) == {"*"}:
            return f"{start} ({field_!r} is a number too wide for its column, written as asterisks)"
        if _run_on(field_):
            return f"{start} (values run together in {field_!r})"
    if k == len(widths) - 1 and len(fields) < n:
        return f"{start} (the row is truncated)"
    return f"{start} (is the file wrapped although WRAP is NO?)"


def _run_on(field_: str) -> bool:
    """Whether lasio's run-on read policies would split ``field_`` (``0.2-999.25``, ``7.02.3``):
    two numbers written without a blank between them.  lasio repairs such a field; here it
    only names what is wrong with the row."""
    rules = [rule for name in ("run-on(-)", "run-on(.)") for rule, _ in READ_SUBS[name]]
    return "." in field_ and any(rule.search(field_) for rule in rules)
