/** The reminders module's public surface: import from 'src/modules/reminders', not its files. */
export { PostgresReminderStore, type PgQueryable } from './postgres-reminder-store';
export { ReminderMetrics, RemindersModule } from './reminders.module';
