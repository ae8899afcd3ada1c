// better-sqlite3 12 builds its databases, statements and iterators on node::ObjectWrap. Node
// 24.19 changed that class to register a cleanup hook, and its destructor to remove it after
// looking up the current Node environment, which is not there while the garbage collector
// frees an object: freeing any of them aborts the process ("Assertion failed: (env) !=
// nullptr" in RemoveEnvironmentCleanupHook, nodejs/node#65446). Still so in 24.21; 26.12 is
// not affected; 25 was not checked and counts as affected. better-sqlite3 13 no longer uses
// ObjectWrap, but needs Node 22, above our floor. On such a runtime every one of those
// objects Parley creates is kept reachable until the process exits, when Node's own cleanup
// frees them safely; the statement cache then keeps every SQL text it has seen (db.ts). A
// closed database has finalized its statements, so what it keeps then is a few hundred
// bytes each.

/** Whether freeing a better-sqlite3 object aborts the process on this runtime. */
export const FREEING_SQLITE_OBJECTS_ABORTS = freeingAborts(process.versions.node);

/** The runtimes whose node::ObjectWrap removes its cleanup hook without an environment. */
export function freeingAborts(nodeVersion: string): boolean {
  const [major, minor] = nodeVersion.split('.').map(Number);
  return (major === 24 && minor >= 19) || major === 25;
}

const keptForLife: object[] = [];

/** The object itself; on a runtime where freeing it aborts, kept until the process exits. */
export function keepForLife<T extends object>(object: T): T {
  if (FREEING_SQLITE_OBJECTS_ABORTS) keptForLife.push(object);
  return object;
}
