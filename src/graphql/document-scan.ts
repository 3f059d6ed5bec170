import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';

/** What one lexical pass over a document's text found, before it is parsed. */
export interface DocumentScan {
  /** Tokens read (comments not counted, as graphql-js's parser counts them). */
  tokens: number;
  /** The limit the text is over, if any (the scan stops there). */
  over?: 'maxTokens' | 'maxNesting';
}

const OPENING = new Set<TokenKind>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<TokenKind>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * Counts the tokens of a document and how deep its brackets (`{ }`, `[ ]`, `( )`) nest, with
 * graphql-js's own lexer, so brackets inside strings, block strings and comments do not count.
 * graphql-js's parser recurses once per level: a document nested a few thousand levels deep would
 * exhaust its stack, so such a document is refused before it is parsed. Linear in the text, and
 * stops at the first limit passed. A syntax error stops the scan too: the parser then reports it.
 */
export function scanDocument(text: string, maxTokens: number, maxNesting: number): DocumentScan {
  const lexer = new Lexer(new Source(text));
  let tokens = 0;
  let nesting = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > maxTokens) return { tokens, over: 'maxTokens' };
      if (OPENING.has(token.kind)) {
        if (++nesting > maxNesting) return { tokens, over: 'maxNesting' };
      } else if (CLOSING.has(token.kind)) nesting--;
    }
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
  }
  return { tokens };
}
