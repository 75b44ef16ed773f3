/**
 * A stdio MCP server for the global-server tests: `node --import tsx stdioServer.ts`. It offers
 * the standard test tools and exits when stdin closes (the client closed the transport).
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { makeToolServer, newServerLog, standardTools } from "./testTools"

const server = makeToolServer(standardTools, newServerLog())
await server.connect(new StdioServerTransport())
process.stdin.on("end", () => process.exit(0))
