/**
 * The schema of json-server's README db.json, as a user writes it for `--compat json-server`:
 * posts with views, comments of a post, readable and writable without a token.
 */
export const BLOG_SCHEMA = `
resources:
  posts:
    access: { read: public, write: public }
    fields:
      title: { type: string }
      views: { type: integer }
    relations:
      comments: { hasMany: comments, foreignKey: postId }
  comments:
    access: { read: public, write: public }
    fields:
      text: { type: string }
      postId: { type: integer, references: posts, onDelete: cascade }
    relations:
      post: { belongsTo: posts, foreignKey: postId }
`;
