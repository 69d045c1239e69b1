import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** One row per conversation that has stored events. */
@Entity({ name: 'conversation' })
export class ConversationEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'started_at', type: 'double precision' })
  startedAt!: number;

  @Column({ name: 'latest_event_time', type: 'double precision' })
  latestEventTime!: number;

  @Column({ name: 'last_seq', type: 'integer' })
  lastSeq!: number;

  @Column({ type: 'uuid', default: () => 'gen_random_uuid()' })
  generation!: string;

  @Column({ name: 'session_start_seq', type: 'integer', nullable: true })
  sessionStartSeq!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
