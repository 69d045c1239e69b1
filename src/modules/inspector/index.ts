// The inspector module's public file.
export { InspectorPages } from './inspector-pages';
export { InspectorModule } from './inspector.module';
