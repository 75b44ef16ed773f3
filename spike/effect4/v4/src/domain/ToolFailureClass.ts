/** What the model reads about an internal tool failure: the class, never the details. */
export const toolFailureClassText = {
  internal_error: "an internal error"
} as const
