import { Field, ID, ObjectType } from '@nestjs/graphql';
import GraphQLJSON from 'graphql-type-json';
import { ConversationTagModel } from './conversation-tag.model';

@ObjectType('RawConversation')
export class RawConversationModel {
  @Field(() => ID, { description: 'Conversation identifier (the sender id).' })
  id!: string;

  @Field(() => [GraphQLJSON], {
    description: 'Every stored event of the conversation, verbatim and in order.',
  })
  conversationEvents!: Array<Record<string, unknown>>;

  @Field(() => [ConversationTagModel], {
    description: 'Extension (not in the seed): the tags on the conversation, by name.',
  })
  tags!: ConversationTagModel[];
}
