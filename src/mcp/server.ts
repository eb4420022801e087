import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { SpecRoutes } from "../http/spec.js";
import { TOOLS, type ToolDefinition } from "./catalog.js";
import { toolInput, type OpenApiDocument, type ToolBinding } from "./input-schema.js";
import { invokeOperation, type ToolCaller, type ToolResult } from "./invoke.js";

/** A tool with its input schema and binding, built once from openapi.yaml. */
interface BoundTool {
  definition: ToolDefinition;
  inputSchema: Record<string, unknown>;
  binding: ToolBinding;
}

/** The catalogue bound to the contract (throws at start-up when a tool names no operation). */
export function bindTools(document: OpenApiDocument): Map<string, BoundTool> {
  const bound = new Map<string, BoundTool>();
  for (const definition of TOOLS) {
    const { inputSchema, binding } = toolInput(document, definition.operationId, definition.shaping);
    bound.set(definition.name, { definition, inputSchema, binding });
  }
  return bound;
}

/** Version of the MCP server (the API's). */
const SERVER_INFO = { name: "lead-service", version: "1.0.0" };

/**
 * One MCP server for one HTTP request (the stateless Streamable HTTP transport: any API process
 * answers any request, nothing is kept between requests). The low-level `Server` of the SDK, as
 * the tools publish JSON Schemas generated from the contract rather than zod shapes.
 */
export function createMcpServer(
  routes: SpecRoutes,
  tools: Map<string, BoundTool>,
  caller: ToolCaller,
): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      "Find US small businesses as leads, buy them with credits, export them, push them to integrations. " +
      "Tools that cost credits or send data out say so. Long-running tools answer a job: poll get_job.",
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools.values()].map(({ definition, inputSchema }) => ({
      name: definition.name,
      title: definition.title,
      description: definition.description,
      inputSchema: inputSchema as { type: "object"; [key: string]: unknown },
      annotations: { title: definition.title, ...definition.annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<ToolResult> => {
    const tool = tools.get(request.params.name);
    if (!tool) {
      const body = { error: "not_found", message: `No tool named ${request.params.name}.` };
      return {
        content: [{ type: "text", text: JSON.stringify(body) }],
        structuredContent: body,
        isError: true,
      };
    }
    return invokeOperation(
      routes.byId(tool.definition.operationId),
      tool.binding,
      request.params.arguments ?? {},
      caller,
    );
  });
  return server;
}
