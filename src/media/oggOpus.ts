import { Result } from "effect"

/**
 * Reads an Ogg Opus stream (RFC 3533 pages, RFC 7845 Opus mapping) far enough to send it as a
 * Discord voice message: its duration and a waveform. Nothing is decoded: the duration comes
 * from the last page's granule position (48 kHz samples) minus the OpusHead pre-skip, and the
 * waveform from the sizes of the encoded packets (a variable-bitrate encoder spends more bytes
 * on louder, busier audio, which is what the waveform shows).
 */

export interface OggOpusInfo {
  /** Playback length in seconds (granule / 48000 − pre-skip / 48000). */
  readonly durationSecs: number
  /** Base64 of up to 256 amplitude bytes (0–255), Discord's `waveform` attachment field. */
  readonly waveform: string
  readonly channels: number
  readonly packets: number
}

/** Discord's voice-message waveform has at most this many samples. */
export const WAVEFORM_SAMPLES = 256
/** Opus granule positions count 48 kHz samples whatever the input rate (RFC 7845 §4). */
const OPUS_RATE = 48_000
/** A page holds at most 255 segments of 255 bytes; more pages than bytes/27 cannot exist. */
const PAGE_HEADER = 27

const ascii = (bytes: Uint8Array, offset: number, length: number): string =>
  String.fromCharCode(...bytes.subarray(offset, offset + length))

/** True when the bytes start like an Ogg stream (`OggS`). */
export const looksLikeOgg = (bytes: Uint8Array): boolean => bytes.length >= 4 && ascii(bytes, 0, 4) === "OggS"

/** Duration and waveform of an Ogg Opus file, or why it is not one. */
export const readOggOpus = (bytes: Uint8Array): Result.Result<OggOpusInfo, string> => {
  if (!looksLikeOgg(bytes)) return Result.fail("the audio is not an Ogg stream (no OggS capture pattern)")
  const data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const packets: Array<number> = []
  let pending = 0
  let firstPacket: Uint8Array | undefined
  let firstPacketParts: Array<Uint8Array> = []
  let serial: number | undefined
  let lastGranule = -1n
  let offset = 0
  while (offset < bytes.length) {
    if (offset + PAGE_HEADER > bytes.length || ascii(bytes, offset, 4) !== "OggS") {
      return Result.fail(`broken Ogg page at byte ${offset}`)
    }
    const pageSerial = data.getUint32(offset + 14, true)
    serial ??= pageSerial
    const granule = data.getBigInt64(offset + 6, true)
    const segments = bytes[offset + 26] ?? 0
    const tableEnd = offset + PAGE_HEADER + segments
    if (tableEnd > bytes.length) return Result.fail(`truncated Ogg page at byte ${offset}`)
    let body = tableEnd
    for (let index = 0; index < segments; index++) {
      const size = bytes[offset + PAGE_HEADER + index] ?? 0
      if (body + size > bytes.length) return Result.fail(`truncated Ogg page at byte ${offset}`)
      if (pageSerial === serial) {
        if (firstPacket === undefined) firstPacketParts.push(bytes.subarray(body, body + size))
        pending += size
        // A lacing value below 255 ends the packet.
        if (size < 255) {
          if (firstPacket === undefined) {
            firstPacket = Buffer.concat(firstPacketParts)
            firstPacketParts = []
          } else {
            packets.push(pending)
          }
          pending = 0
        }
      }
      body += size
    }
    // −1 marks a page on which no packet ends.
    if (pageSerial === serial && granule >= 0n) lastGranule = granule
    offset = body
  }
  if (firstPacket === undefined || firstPacket.length < 19 || ascii(firstPacket, 0, 8) !== "OpusHead") {
    return Result.fail("the Ogg stream does not carry Opus (no OpusHead header)")
  }
  const head = new DataView(firstPacket.buffer, firstPacket.byteOffset, firstPacket.byteLength)
  const channels = firstPacket[9] ?? 0
  const preSkip = head.getUint16(10, true)
  // The second packet is OpusTags; audio packets follow.
  const audio = packets.slice(1)
  if (audio.length === 0 || lastGranule < 0n) return Result.fail("the Ogg Opus stream holds no audio")
  const durationSecs = Math.max(0, Number(lastGranule - BigInt(preSkip)) / OPUS_RATE)
  return Result.succeed({ durationSecs, waveform: waveformOf(audio), channels, packets: audio.length })
}

/**
 * Up to 256 samples: the packet sizes averaged per bucket and scaled so the largest is 255.
 * Silence (DTX) packets of 1–3 bytes come out near zero.
 */
export const waveformOf = (packetSizes: ReadonlyArray<number>): string => {
  const count = Math.min(WAVEFORM_SAMPLES, packetSizes.length)
  if (count === 0) return ""
  const buckets: Array<number> = []
  for (let bucket = 0; bucket < count; bucket++) {
    const start = Math.floor((bucket * packetSizes.length) / count)
    const end = Math.max(start + 1, Math.floor(((bucket + 1) * packetSizes.length) / count))
    const slice = packetSizes.slice(start, end)
    buckets.push(slice.reduce((sum, size) => sum + size, 0) / slice.length)
  }
  const floor = Math.min(...buckets)
  const top = Math.max(...buckets)
  const span = top - floor
  const samples = buckets.map((value) => (span <= 0 ? 128 : Math.round(((value - floor) / span) * 255)))
  return Buffer.from(samples).toString("base64")
}
