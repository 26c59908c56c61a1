-- Run by a PUC Lua, not LuaJIT (tests/CMakeLists.txt, module.puc_lua.*): the built
-- module loads, and refuses to run, saying why (bindings/lua_api.h), whether the
-- first require is of the module itself or of one of its Lua modules.
--   lua5.x puc_lua.lua MODULE_DIR
package.cpath = arg[1] .. "/?.so"
for _, name in ipairs({ "luacrawl.crawl", "luacrawl" }) do
  local ok, err = pcall(require, name)
  assert(not ok, ("require %q succeeded under %s"):format(name, _VERSION))
  err = tostring(err)
  assert(err:find("luacrawl needs LuaJIT, and this Lua is not LuaJIT", 1, true),
    ("require %q under %s: %s"):format(name, _VERSION, err))
end
print(_VERSION .. ": luacrawl needs LuaJIT")
