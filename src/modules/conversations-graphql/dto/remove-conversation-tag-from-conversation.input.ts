import { Field, ID, InputType } from '@nestjs/graphql';

@InputType('RemoveConversationTagFromConversationInput')
export class RemoveConversationTagFromConversationInput {
  @Field(() => ID)
  conversationId!: string;

  @Field(() => ID)
  tagId!: string;
}
