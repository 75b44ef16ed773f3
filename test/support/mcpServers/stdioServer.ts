/**
 * A stdio MCP server for the global-server tests: `node --import tsx stdioServer.ts [prefix]`.
 * It offers the standard test tools (named `${prefix}echo` … when a prefix is given) and exits
 * when stdin closes (the client closed the transport).
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { makeToolServer, newServerLog, prefixedTools } from "./testTools"

const server = makeToolServer(prefixedTools(process.argv[2] ?? ""), newServerLog())
await server.connect(new StdioServerTransport())
process.stdin.on("end", () => process.exit(0))
