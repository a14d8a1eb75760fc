"""What every service is built on: settings, database, migrations, jobs, web helpers."""

from common.migrations import MigrationSet

MIGRATIONS = MigrationSet.beside(__file__)
