// The conversations module's public surface: other modules import from here only.
export { ConversationsModule } from './conversations.module';
