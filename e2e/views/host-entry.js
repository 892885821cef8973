// What host.mjs bundles for the browser: ext-apps' host side.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.NexusHost = { AppBridge, PostMessageTransport };
