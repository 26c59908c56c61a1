-- cmake/embed_source.lua SYMBOL SOURCE HEADER: writes HEADER, a C array SYMBOL
-- holding the bytes of the Lua file SOURCE, and SYMBOL_SIZE (run by EmbedLua.cmake
-- at build time).
local sym, src, hdr = arg[1], arg[2], arg[3]
local f = assert(io.open(src, "rb"))
local data = f:read("*a")
f:close()
assert(loadstring(data, "@" .. src)) -- a syntax error fails the build here
local out = { "/* Generated from ", src, " by cmake/embed_source.lua: do not edit. */\n",
  "#define ", sym, "_SIZE ", #data, "\n",
  "static const unsigned char ", sym, "[] = {\n" }
for i = 1, #data, 16 do
  local row = {}
  for j = i, math.min(i + 15, #data) do row[#row + 1] = string.byte(data, j) end
  out[#out + 1] = table.concat(row, ",") .. ",\n"
end
out[#out + 1] = "0};\n"
f = assert(io.open(hdr, "wb"))
f:write(table.concat(out))
f:close()
