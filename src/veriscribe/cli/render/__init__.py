"""What the commands draw: reports, tables and live progress views, on a given console.

One module per command group, and :mod:`~veriscribe.cli.render.shared` for what
several of them use.

Titles, names, ids, reasons and model replies are input: they are drawn as text, never
as Rich markup. The consoles (:mod:`veriscribe.cli.terminal`) read no string as markup,
so the code's own styling is written as :class:`~rich.text.Text` with styles; and where
Rich itself would parse a string (panel titles, spinners, progress columns) it is given
Text, or a column with markup off.
"""
