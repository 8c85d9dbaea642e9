// Paddock from TypeScript: a sandbox on paddockd's local provider, a
// command's whole result, another's output as it comes, a file written and
// read back.
//
//	go run ./cmd/paddockd &
//	npm ci --prefix clients/typescript
//	clients/typescript/node_modules/.bin/tsc -p examples/typescript
//	node clients/typescript/dist/example/examples/typescript/quickstart.js
import { PaddockClient } from "../../clients/typescript/src/index.js";

const client = new PaddockClient({
  baseUrl: process.env.PADDOCKD_URL ?? "http://127.0.0.1:8423",
  token: process.env.PADDOCKD_TOKEN,
});
const sandbox = await client.create("local", "quickstart-ts");
try {
  const result = await sandbox.exec(["echo", "hello from a sandbox"]);
  process.stdout.write(result.stdout);
  const ticks = await sandbox.spawn(["sh", "-c", "for i in 1 2 3; do echo tick $i; done"]);
  for await (const frame of ticks) {
    if (frame.kind === "stdout") process.stdout.write(frame.data);
    else if (frame.kind === "exit") console.log("exit", frame.code);
  }
  await sandbox.files.write("/notes/hello.txt", "written from typescript\n");
  process.stdout.write(await sandbox.files.read("/notes/hello.txt"));
} finally {
  await sandbox.destroy();
  client.close();
}
