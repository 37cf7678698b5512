// lichhook's sub-agent cards on Claude Code's own engine: `claude plugin test` runs this file
// beside the mods of a built plugin (tests/e2e/test_claude_mods.py copies it there). The test's
// `$` is the engine's, so its Agent call is the model's; lich's command line is a stand-in on
// process.run, and the test's own tool.call hook is Claude Code's native agent beneath the mods.
import { test, expect, mock } from 'claude-code/testing'

const LICH = { LICH_PORT: '4567', LICH_TOKEN: 'tok', LICH_SESSION_ID: 'card', LICH_BIN: '/opt/lich/lich' }
const OPENED = { id: 'w1', label: 'Session 4', name: 'session-4-w1', path: '/p', delivery: { ticket: 't1', target: 'Session 4', status: 'pending', answer: '' } }

// A session in lich whose command line answers `open` with `opened`; every argv kept.
function lich(on: any, opened: unknown = OPENED) {
  const runs: string[][] = []
  const native: unknown[] = []
  on('http.fetch', () => new Promise(() => {}))
  on('session.start', (_: unknown, e: unknown) => e)
  mock.clock(on, { now: 1000 })
  on('fs.exists', (_: unknown, e: any) => ({ value: e.path === LICH.LICH_BIN }))
  on('process.run', (_: unknown, e: any) => {
    runs.push([...e.argv])
    const stdout = e.argv[1] === 'open' ? JSON.stringify(opened) : e.argv[1] === 'sessions' ? '[]' : ''
    return { value: { exitCode: 0, stdout, stderr: '' } }
  })
  on('tool.call', { tool: 'Agent' }, (_: unknown, e: unknown) => { native.push(e); return { result: { status: 'async_launched', agentId: 'native', description: 'x', prompt: 'x', outputFile: '' } } })
  on('tool.call', { tool: 'TaskStop' }, (_: unknown, e: unknown) => { native.push(e); return { result: { message: 'native', task_id: 'x', task_type: 'local_agent' } } })
  return { runs, native }
}

test('the model\'s Agent call opens a lich sub-agent session and answers as launched', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on)
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  const done: any = await $.tool.call({ tool: 'Agent', description: 'port the parser', prompt: 'port it', subagent_type: 'general-purpose' } as any)
  expect(world.runs).toEqual([['/opt/lich/lich', 'open', '--kind', 'claude', '--subagent', '--prompt', 'port it', '--json']])
  expect(world.native).toEqual([])
  expect(done.result.status).toBe('async_launched')
  expect(done.result.agentId).toBe('w1')
})

test('a typed sub-agent stays Claude Code\'s own, and lich is not run', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on)
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await $.tool.call({ tool: 'Agent', description: 'look', prompt: 'find it', subagent_type: 'Explore' } as any)
  expect(world.runs).toEqual([])
  expect(world.native.length).toBe(1)
})

test('TaskStop on a worker closes its card through lich', async ($, on) => {
  mock.env(on, LICH)
  const world = lich(on)
  await $.session.start({ cwd: '/w', surface: 'terminal', isInteractive: true } as any)
  await $.tool.call({ tool: 'Agent', description: 'port the parser', prompt: 'port it' } as any)
  const stopped: any = await $.tool.call({ tool: 'TaskStop', task_id: 'w1' } as any)
  expect(world.runs.at(-1)).toEqual(['/opt/lich/lich', 'close', '--', 'session-4-w1'])
  expect(world.native).toEqual([])
  expect(stopped.result.task_id).toBe('w1')
})
