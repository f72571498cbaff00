import { bridged, direct, nodeServer } from "./tests/process/passthrough_helpers.ts";
const server = nodeServer("everything", "stdio");
const d = await direct(server);
const b = await bridged(["--", ...server]);
console.log("versions", JSON.stringify(d.client.getServerVersion()), JSON.stringify(b.client.getServerVersion()));
console.log("caps", JSON.stringify(d.client.getServerCapabilities()), JSON.stringify(b.client.getServerCapabilities()));
const dt = await d.client.listTools(); const bt = await b.client.listTools();
console.log("tools", dt.tools.map((t: {name:string}) => t.name).join(","));
console.log("tools equal", JSON.stringify(dt) === JSON.stringify(bt));
if (JSON.stringify(dt) !== JSON.stringify(bt)) { for (let i=0;i<dt.tools.length;i++) if (JSON.stringify(dt.tools[i])!==JSON.stringify(bt.tools[i])) console.log(JSON.stringify(dt.tools[i]), "\n", JSON.stringify(bt.tools[i])); }
for (const m of ["listPrompts","listResources","listResourceTemplates"] as const) {
  const x = await d.client[m](); const y = await b.client[m]();
  console.log(m, JSON.stringify(x) === JSON.stringify(y), JSON.stringify(x).slice(0,300));
}
console.log(JSON.stringify(await b.client.callTool({name:"echo", arguments:{message:"hi"}})));
console.log(JSON.stringify(await b.client.callTool({name:"get-env", arguments:{}})).slice(0,300));
console.log(JSON.stringify(await d.client.callTool({name:"get-env", arguments:{}})).slice(0,300));
console.log(b.stderr());
await d.client.close(); await b.client.close();
