"""Words: how text is cut into words (jieba, stems), shown on one line, and where person names are
in it."""
