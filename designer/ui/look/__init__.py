"""How the window looks: the light and dark themes and the colours the canvases paint with
(``theme``), and the icons tinted for the theme (``resources``)."""
