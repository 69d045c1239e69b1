import { Module } from '@nestjs/common';
import { ModelModule } from 'src/modules/model';
import { ReviewPage } from './review-page';
import { ReviewPageController } from './review-page.controller';

/**
 * The conversation review page at `/review/`: served whenever the conversation-management
 * GraphQL API is, that is always (the page only talks to /api/graphql and the identity
 * provider).
 */
@Module({
  imports: [ModelModule],
  controllers: [ReviewPageController],
  providers: [ReviewPage],
})
export class ReviewModule {}
