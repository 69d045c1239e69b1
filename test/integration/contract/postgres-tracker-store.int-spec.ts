import { type JsonObject, type ReminderRecord } from 'src/core';
import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { describeTrackerStoreContract } from 'test/contract/tracker-store.contract';
import { DataSource } from 'typeorm';

interface ReminderRow {
  conversation_id: string;
  name: string;
  intent: string;
  entities: JsonObject[];
  trigger_at: number;
  kill_on_user_msg: boolean;
  scheduled_at: number;
  output_channel: string | null;
}

describeTrackerStoreContract(PostgresTrackerStore.name, async () => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL missing');
  const dataSource = await new DataSource(buildTypeOrmOptions(url, 4)).initialize();
  return {
    store: new PostgresTrackerStore(dataSource, new EventOutbox(dataSource)),
    reminders: async (conversationId: string): Promise<ReminderRecord[]> => {
      const rows = await dataSource.query<ReminderRow[]>(
        `SELECT conversation_id, name, intent, entities,
           (extract(epoch FROM trigger_at) * 1000)::float8 AS trigger_at, kill_on_user_msg,
           scheduled_at, output_channel
         FROM reminder WHERE conversation_id = $1 ORDER BY name COLLATE "C"`,
        [conversationId],
      );
      return rows.map((r) => ({
        conversationId: r.conversation_id,
        name: r.name,
        intent: r.intent,
        entities: r.entities,
        triggerAt: r.trigger_at,
        killOnUserMessage: r.kill_on_user_msg,
        scheduledAt: r.scheduled_at,
        outputChannel: r.output_channel,
      }));
    },
    dispose: () => dataSource.destroy(),
  };
});
