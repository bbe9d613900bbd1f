"""The database: connection and migrations, and one module per table family."""
