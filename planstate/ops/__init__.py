"""Operations: the only code that changes state, each inside a transaction."""
