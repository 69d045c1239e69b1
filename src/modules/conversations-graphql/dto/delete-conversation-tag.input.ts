import { Field, ID, InputType } from '@nestjs/graphql';

@InputType('DeleteConversationTagInput', {
  description: 'Parley extension beyond the specification.',
})
export class DeleteConversationTagInput {
  @Field(() => ID)
  tagId!: string;
}
