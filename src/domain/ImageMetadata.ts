/** Images a tool posted or fetched, replayed to vision models with the tool response. */
export interface ImageMetadata {
  readonly imageUrls: ReadonlyArray<{
    readonly url: string
    readonly mimeType?: string
    readonly wasCompressed?: boolean
    readonly originalUrl?: string
  }>
  readonly totalSent: number
  readonly totalValidated: number
  readonly messageIds?: ReadonlyArray<string>
}
