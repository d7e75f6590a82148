"""Text: one file cut into pieces (`text_cut`), a folder per class (`text_folder`), SQuAD-style
JSON (`squad_json`).
"""
