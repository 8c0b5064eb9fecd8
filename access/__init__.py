"""Who may reach what on a public server.

- `outbound`: a base URL typed in the page may not point the server at itself, its
  private network or the cloud's metadata service; the address that was checked is the
  one the connection uses.
- `class_code`: the class code that lets a browser session (or an API caller) use the
  keys configured on the server.
- `key_meter`: how many model requests the server's keys may make, per session, per
  client address and per day.
- `server_keys`: the policy that puts those together for one app, and the client
  wrapper that charges every model request made with a server key.
- `clients`: the model settings of a run (`Settings`) and the one factory that turns them into
  a client, choosing the key and the address and applying the three above.
"""
