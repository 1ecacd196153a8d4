"""Data package: the SQL files anonsql runs, one query per file (see anonsql.sql)."""
