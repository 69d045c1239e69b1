/** The tracker module's public surface: import from 'src/modules/tracker', not its files. */
export { PostgresLockStore } from './postgres-lock-store';
export { PostgresTrackerStore } from './postgres-tracker-store';
export { TrackerModule } from './tracker.module';
