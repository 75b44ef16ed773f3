import { createSocket, type RemoteInfo } from "node:dgram"
import { isIP } from "node:net"
import ipaddr from "ipaddr.js"

/**
 * A tiny authoritative DNS server over UDP on 127.0.0.1 (RFC 1035 wire format): A and AAAA
 * answers from a table, NXDOMAIN for names not in it, and `silent` names that are never
 * answered (a black-holed domain). Enough for c-ares (`dns.promises.Resolver`) to talk to.
 */
export interface FakeDnsServer {
  /** `127.0.0.1:port`, for `Resolver.setServers`. */
  readonly address: string
  /** Questions received, as `name TYPE`. */
  readonly questions: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

const TYPE_A = 1
const TYPE_AAAA = 28

/** Reads the question name at `offset`; returns the name and the offset after it. */
const readName = (message: Buffer, offset: number): { readonly name: string; readonly next: number } => {
  const labels: Array<string> = []
  let at = offset
  for (;;) {
    const length = message[at] ?? 0
    if (length === 0) return { name: labels.join(".").toLowerCase(), next: at + 1 }
    labels.push(message.subarray(at + 1, at + 1 + length).toString("ascii"))
    at += 1 + length
  }
}

const record = (type: number, address: string): Buffer => {
  const data = Buffer.from(ipaddr.parse(address).toByteArray())
  const head = Buffer.alloc(12)
  head.writeUInt16BE(0xc00c, 0) // pointer to the question name
  head.writeUInt16BE(type, 2)
  head.writeUInt16BE(1, 4) // class IN
  head.writeUInt32BE(60, 6) // TTL
  head.writeUInt16BE(data.length, 10)
  return Buffer.concat([head, data])
}

export const startFakeDnsServer = async (options: {
  readonly answers: Readonly<Record<string, ReadonlyArray<string>>>
  readonly silent?: ReadonlyArray<string>
}): Promise<FakeDnsServer> => {
  const socket = createSocket("udp4")
  const questions: Array<string> = []
  socket.on("message", (message: Buffer, peer: RemoteInfo) => {
    if (message.length < 12) return
    const { name, next } = readName(message, 12)
    const type = message.readUInt16BE(next)
    questions.push(`${name} ${type === TYPE_A ? "A" : type === TYPE_AAAA ? "AAAA" : String(type)}`)
    if (options.silent?.includes(name) === true) return
    const known = options.answers[name]
    const matching = (known ?? []).filter((address) => isIP(address) === (type === TYPE_A ? 4 : type === TYPE_AAAA ? 6 : -1))
    const header = Buffer.alloc(12)
    header.writeUInt16BE(message.readUInt16BE(0), 0) // id
    header.writeUInt16BE(known === undefined ? 0x8583 : 0x8580, 2) // response, authoritative, RD; NXDOMAIN or NOERROR
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(matching.length, 6)
    const question = message.subarray(12, next + 4)
    const reply = Buffer.concat([header, question, ...matching.map((address) => record(type, address))])
    socket.send(reply, peer.port, peer.address)
  })
  const port = await new Promise<number>((resolve, reject) => {
    socket.once("error", reject)
    socket.bind(0, "127.0.0.1", () => resolve(socket.address().port))
  })
  return {
    address: `127.0.0.1:${port}`,
    questions,
    close: () => new Promise((resolve) => socket.close(() => resolve()))
  }
}
