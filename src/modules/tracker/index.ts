// The tracker module's public surface: other modules import from here only.
export { TrackerModule } from './tracker.module';
