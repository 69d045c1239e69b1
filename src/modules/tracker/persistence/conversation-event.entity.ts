import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One stored event: the wire JSON plus the columns that queries filter on. */
@Entity({ name: 'conversation_event' })
export class ConversationEventEntity {
  @PrimaryColumn({ name: 'conversation_id', type: 'text' })
  conversationId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ name: 'type_name', type: 'text' })
  typeName!: string;

  @Column({ name: 'timestamp', type: 'double precision' })
  timestamp!: number;

  @Column({ name: 'intent_name', type: 'text', nullable: true })
  intentName!: string | null;

  @Column({ name: 'action_name', type: 'text', nullable: true })
  actionName!: string | null;

  @Column({ type: 'json' })
  data!: Record<string, unknown>;
}
