// The server-info module's public surface: other modules import from here only.
export { ServerInfoModule } from './server-info.module';
