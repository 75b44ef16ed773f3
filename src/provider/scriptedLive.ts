import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Layer } from "effect"
import * as Scripted from "./scripted/ScriptedModel"

/** `LLM_PROVIDER=scripted`: the scripted model from LLM_SCRIPT (loaded only when chosen). */
export const scriptedLive = Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer))
