import { Field, ID, InputType } from '@nestjs/graphql';

@InputType('CreateConversationTagInput', {
  description: 'Parley extension beyond the specification.',
})
export class CreateConversationTagInput {
  @Field(() => ID)
  assistantId!: string;

  @Field({ description: '1 to 100 characters; unique per assistant.' })
  name!: string;
}
