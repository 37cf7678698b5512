// lichhook's Claude Code mods on Claude Code's own engine: `claude plugin test` runs this file
// beside the mods of a built plugin (tests/e2e/test_claude_mods_engine.py copies it there), with
// Claude Code's own event dispatch, `$` and mock clock; lich is a stand-in on http.fetch.
import { test, expect, mock } from 'claude-code/testing'

const LICH = { LICH_PORT: '4567', LICH_TOKEN: 'tok', LICH_SESSION_ID: 'card' }
const answer = (status: number, body?: unknown) =>
  ({ value: { status, ok: status < 300, headers: {}, text: body === undefined ? '' : JSON.stringify(body) } })

// A session in lich whose /mod/commands answers `polls` in turn, then holds; every request kept.
function lich(on: any, polls: unknown[] = [], routes: Record<string, unknown> = {}) {
  const sent: any[] = []
  on('http.fetch', (_: unknown, e: any) => {
    const path = new URL(e.url).pathname
    sent.push({ path, at: clock.now(), body: e.init?.body ? JSON.parse(e.init.body) : undefined, headers: e.init?.headers })
    if (path === '/mod/commands') return polls.length ? polls.shift() : new Promise(() => {})
    if (path in routes) return typeof routes[path] === 'function' ? (routes[path] as () => unknown)() : routes[path]
    if (path === '/mod/status') return answer(200, { owed: [], open: [], ready: [] })
    return answer(204)
  })
  on('session.start', (_: unknown, e: unknown) => e)
  on('session.id', () => ({ value: 'conv-1' }))
  const clock = mock.clock(on, { now: 1000 })
  return { sent, clock, to: (path: string) => sent.filter((r) => r.path === path) }
}

test('a prompt from lich becomes a turn and is acked with the contract release', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on, [answer(200, [{ id: 'm1', kind: 'prompt', text: 'run the tests' }])])
  const submitted: string[] = []
  on('prompt.submit', (_, e) => { submitted.push(e.text); return { text: e.text } })
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await world.clock.advance(100)
  expect(submitted).toEqual(['run the tests'])
  const [ack] = world.to('/mod/acks')
  expect(ack.body).toEqual({ session_id: 'card', id: 'm1', kind: 'prompt', ok: true })
  expect(ack.headers['X-Lich-Plugin']).toMatch(/^\d+\.\d+\.\d+$/)
})

test('an unknown kind is acked not ok', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on, [answer(200, [{ id: 'z', kind: 'teleport' }])])
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await world.clock.advance(100)
  expect(world.to('/mod/acks').map((r) => r.body)).toEqual([{ session_id: 'card', id: 'z', kind: 'teleport', ok: false, error: 'unknown kind' }])
})

test('lich failing: the poll backs off 1 s doubling to 10 s; a 404 stops it', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on, [answer(500), answer(503), answer(500), answer(502), answer(500), answer(500), answer(404)])
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await world.clock.advance(120000)
  const at = world.to('/mod/commands').map((r) => r.at)
  expect(at.slice(1).map((t, i) => t - at[i])).toEqual([1000, 2000, 4000, 8000, 10000, 10000])
})

test('outside lich, and under claude -p, nothing is sent', async ($, on) => {
  const world = lich(on)
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await world.clock.advance(60000)
  expect(world.sent).toEqual([])
})

test('a non-interactive run stays silent inside lich', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on, [answer(200, [{ id: 'm1', kind: 'prompt', text: 'no' }])])
  await $.session.start({ cwd: '/w', surface: null, isInteractive: false } as any)
  await world.clock.advance(60000)
  expect(world.sent).toEqual([])
})

test('usage carries Claude Code figures, absent ones left out', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on)
  on('session.measure', (_, e) => ({ changed: e.changed }))
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await $.session.measure({ context: { window: 200000, tokens: 43592, percent: 22 }, rateLimits: [], cost: { usd: 0.5 }, changed: ['context'] } as any)
  await world.clock.advance(10)
  expect(world.to('/mod/usage').map((r) => r.body)).toEqual([
    { session_id: 'card', conversation_id: 'conv-1', context: { window: 200000, tokens: 43592, percent: 22 }, rate_limits: [], cost_usd: 0.5 }])
})

// The engine's own drawing is out of the kit's reach: the hook beneath the mods' is where the
// labels they hand on are read. The kit answers no ui.invalidate, so each read mounts an instance afresh.
test('the footer line goes after Claude Code\'s mode labels, is drawn again when it changes, then is gone', async ($, on) => {
  mock.env(on, LICH)
  const errands = [answer(200, { owed: [], open: [{ ticket: '4', target: 'docs', state: 'busy' }], ready: [] })]
  const world = lich(on, [], { '/mod/status': () => errands.shift() || answer(200, { owed: [], open: [], ready: [] }) })
  const redraws: any[] = []
  on('ui.invalidate', (_: unknown, e: any) => { redraws.push(e.event); return { value: undefined } })
  const handed: unknown[] = []
  on('ui.render', { component: 'SessionMode' }, (_: unknown, e: any, next: any) => { handed.push(e.props.modes); return next(e) })
  const draw = (requestId: string) => $.ui.mount({ plugin: 'lich', surface: 'terminal', component: 'SessionMode', requestId, props: { modes: ['focus'] } } as any)
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await world.clock.advance(100)
  await draw('first')
  expect(handed).toEqual([['focus', 'lich: 1 task out']])
  await world.clock.advance(5000)
  expect(redraws.filter((e) => e === 'ui.render')).toHaveLength(2)
  await draw('after')
  expect(handed.at(-1)).toEqual(['focus'])
})
