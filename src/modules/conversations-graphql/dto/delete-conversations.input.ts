import { Field, ID, InputType } from '@nestjs/graphql';

@InputType('DeleteConversationsInput')
export class DeleteConversationsInput {
  @Field(() => [ID], { description: 'At most GRAPHQL_MAX_DELETE_IDS identifiers.' })
  conversationIds!: string[];
}
