"""The format as typed models: schema, kinds of files, validation, derived and typed values."""
