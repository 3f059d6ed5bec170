/**
 * A `posts` resource (YAML, indented under `resources:`) whose drafts and `notes` only their
 * author reads: the list rule `published = true or authorId = @auth.sub`, and the same rule on
 * the `notes` field. Realtime delivery and webhooks under rules are tested on it.
 */
export const AUTHOR_DRAFT_POSTS = `
  posts:
    access: { read: public, write: authenticated }
    rules:
      list: "published = true or authorId = @auth.sub"
    fields:
      title: { type: string, required: true }
      published: { type: boolean, default: false }
      authorId: { type: string }
      notes: { type: string, read: "authorId = @auth.sub" }
`;
