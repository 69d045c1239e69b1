import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { describeTrackerStoreContract } from 'test/contract/tracker-store.contract';
import { DataSource } from 'typeorm';

describeTrackerStoreContract(PostgresTrackerStore.name, async () => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL missing');
  const dataSource = await new DataSource(buildTypeOrmOptions(url, 4)).initialize();
  return {
    store: new PostgresTrackerStore(dataSource, new EventOutbox(dataSource)),
    dispose: () => dataSource.destroy(),
  };
});
