// The words the mods put before the model and in the footer, in the user's prompt
// language (LICH_PROMPT_LANG, which lich exports into every session): English, Brazilian
// Portuguese, Simplified Chinese or Spanish; English for anything else.

const plural = (n, one, many) => (n === 1 ? one : many);

const CATALOGS = {
  en: {
    cardLaunched: (label, name, id) => `This agent runs as the lich session "${label}" (it also answers to "${name}"). Its report comes back to this prompt on its own, as a note from lich; if the note only says a result is ready, collect it with lich's wait_for_answer tool. SendMessage cannot reach it: to tell it more, send to "${name}" with lich's send_to_session. TaskStop with "${id}" stops it.`,
    cardNoReport: (label) => `The lich session "${label}" finished without a report.`,
    cardNative: (task, why) => `lich: "${task}" runs as a Claude Code sub-agent: ${why}`,
    cardTooLong: (n, limit) => `its task is ${n} bytes, over lich's ${limit}`,
    cardNotOpened: (why) => `The agent was not started: the turn was stopped while lich was opening it (${why}).`,
    cardRefused: (why, label) => `The agent was not started here, because lich may already hold its task${label ? ` in the session "${label}"` : ""} (${why}). Running it again could do the work twice: look at lich's sessions (list_sessions) before asking for it again.`,
    cardStopped: (label) => `Closed the lich session "${label}".`,
    cardAborted: (label) => `Stopped the turn of the lich session "${label}"; its card and worktree stay.`,
    cardNotStopped: (label, why) => `lich could not close the session "${label}": ${why}`,
    cardWorkers: (n) => `${n} ${plural(n, "worker", "workers")}`,
    ask: "A side question reached you from outside your turn, through lich. You have no tools for it: answer briefly from what you already know of this session, and do not act on it.",
    edited: (path, minutes, who) => `The lich session ${who} also edited ${path} in the last ${minutes} min. Read the file again before changing it, and keep its changes; send_to_session reaches that session.`,
    editedFooter: (name, who) => `${name} also edited by ${who}`,
    owed: (n, from) => (n === 1 && from ? `owes "${from}" an answer` : `owes ${n} ${plural(n, "answer", "answers")}`),
    open: (n, waiting) => `${n} ${plural(n, "task", "tasks")} out` + (waiting ? ` (${waiting} waiting)` : ""),
    ready: (n) => `${n} ${plural(n, "answer", "answers")} to collect`,
  },
  "pt-BR": {
    cardLaunched: (label, name, id) => `Este agente roda como a sessão do lich "${label}" (ela também atende por "${name}"). O relatório dela volta a este prompt sozinho, como uma nota do lich; se a nota só disser que um resultado está pronto, busque-o com a ferramenta wait_for_answer do lich. O SendMessage não a alcança: para dizer mais a ela, envie para "${name}" com a send_to_session do lich. TaskStop com "${id}" a interrompe.`,
    cardNoReport: (label) => `A sessão do lich "${label}" terminou sem relatório.`,
    cardNative: (task, why) => `lich: "${task}" roda como subagente do Claude Code: ${why}`,
    cardTooLong: (n, limit) => `a tarefa tem ${n} bytes, acima dos ${limit} do lich`,
    cardNotOpened: (why) => `O agente não foi iniciado: o turno foi interrompido enquanto o lich o abria (${why}).`,
    cardRefused: (why, label) => `O agente não foi iniciado aqui, porque o lich pode já ter a tarefa dele${label ? ` na sessão "${label}"` : ""} (${why}). Rodá-lo de novo poderia fazer o trabalho duas vezes: veja as sessões do lich (list_sessions) antes de pedi-lo de novo.`,
    cardStopped: (label) => `Sessão do lich "${label}" fechada.`,
    cardAborted: (label) => `Turno da sessão do lich "${label}" interrompido; o card e a worktree dela continuam.`,
    cardNotStopped: (label, why) => `O lich não conseguiu fechar a sessão "${label}": ${why}`,
    cardWorkers: (n) => `${n} ${plural(n, "subagente", "subagentes")}`,
    ask: "Uma pergunta paralela chegou a você de fora do seu turno, pelo lich. Você não tem ferramentas para ela: responda brevemente com o que já sabe desta sessão e não aja a partir dela.",
    edited: (path, minutes, who) => `A sessão do lich ${who} também editou ${path} nos últimos ${minutes} min. Leia o arquivo de novo antes de alterá-lo e mantenha as mudanças dela; a send_to_session alcança essa sessão.`,
    editedFooter: (name, who) => `${name} também editado por ${who}`,
    owed: (n, from) => (n === 1 && from ? `deve uma resposta a "${from}"` : `deve ${n} ${plural(n, "resposta", "respostas")}`),
    open: (n, waiting) => `${n} ${plural(n, "tarefa", "tarefas")} em andamento` + (waiting ? ` (${waiting} aguardando)` : ""),
    ready: (n) => `${n} ${plural(n, "resposta", "respostas")} para buscar`,
  },
  "zh-CN": {
    cardLaunched: (label, name, id) => `这个代理作为 lich 会话 "${label}" 运行（它也响应 "${name}"）。它的报告会作为 lich 的通知自动回到这个提示符；如果通知只说结果已就绪，请用 lich 的 wait_for_answer 工具领取。SendMessage 无法联系到它：要告诉它更多内容，请用 lich 的 send_to_session 发送给 "${name}"。用 "${id}" 调用 TaskStop 会停止它。`,
    cardNoReport: (label) => `lich 会话 "${label}" 已结束，没有报告。`,
    cardNative: (task, why) => `lich："${task}" 作为 Claude Code 子代理运行：${why}`,
    cardTooLong: (n, limit) => `任务有 ${n} 字节，超过 lich 的 ${limit} 字节上限`,
    cardNotOpened: (why) => `代理未启动：lich 打开它时回合被停止了（${why}）。`,
    cardRefused: (why, label) => `代理没有在这里启动，因为 lich 可能已经持有它的任务${label ? `（会话 "${label}"）` : ""}（${why}）。再次运行可能会把工作做两遍：请先查看 lich 的会话（list_sessions）再重新请求。`,
    cardStopped: (label) => `已关闭 lich 会话 "${label}"。`,
    cardAborted: (label) => `已停止 lich 会话 "${label}" 的回合；它的卡片和工作树保留。`,
    cardNotStopped: (label, why) => `lich 无法关闭会话 "${label}"：${why}`,
    cardWorkers: (n) => `${n} 个子代理`,
    ask: "这是一个通过 lich 从你当前回合之外提出的附带问题。你无法为此使用工具：请根据你对本会话已有的了解简要回答，不要据此采取行动。",
    edited: (path, minutes, who) => `lich 会话 ${who} 在过去 ${minutes} 分钟内也编辑了 ${path}。修改前请重新读取该文件，并保留它的改动；可用 send_to_session 联系该会话。`,
    editedFooter: (name, who) => `${name} 也被 ${who} 编辑过`,
    owed: (n, from) => (n === 1 && from ? `欠 "${from}" 一个回复` : `欠 ${n} 个回复`),
    open: (n, waiting) => `${n} 个任务进行中` + (waiting ? `（${waiting} 个等待中）` : ""),
    ready: (n) => `${n} 个回复待领取`,
  },
  es: {
    cardLaunched: (label, name, id) => `Este agente se ejecuta como la sesión de lich "${label}" (también responde a "${name}"). Su informe vuelve a este prompt por sí solo, como una nota de lich; si la nota solo dice que hay un resultado listo, recógelo con la herramienta wait_for_answer de lich. SendMessage no llega a ella: para decirle algo más, envíalo a "${name}" con send_to_session de lich. TaskStop con "${id}" la detiene.`,
    cardNoReport: (label) => `La sesión de lich "${label}" terminó sin informe.`,
    cardNative: (task, why) => `lich: "${task}" se ejecuta como subagente de Claude Code: ${why}`,
    cardTooLong: (n, limit) => `su tarea tiene ${n} bytes, más de los ${limit} de lich`,
    cardNotOpened: (why) => `El agente no se inició: el turno se detuvo mientras lich lo abría (${why}).`,
    cardRefused: (why, label) => `El agente no se inició aquí, porque lich puede tener ya su tarea${label ? ` en la sesión "${label}"` : ""} (${why}). Ejecutarlo de nuevo podría hacer el trabajo dos veces: mira las sesiones de lich (list_sessions) antes de pedirlo otra vez.`,
    cardStopped: (label) => `Se cerró la sesión de lich "${label}".`,
    cardAborted: (label) => `Se detuvo el turno de la sesión de lich "${label}"; su tarjeta y su worktree se conservan.`,
    cardNotStopped: (label, why) => `lich no pudo cerrar la sesión "${label}": ${why}`,
    cardWorkers: (n) => `${n} ${plural(n, "subagente", "subagentes")}`,
    ask: "Te llegó una pregunta aparte desde fuera de tu turno, a través de lich. No tienes herramientas para ella: responde brevemente con lo que ya sabes de esta sesión y no actúes a partir de ella.",
    edited: (path, minutes, who) => `La sesión de lich ${who} también editó ${path} en los últimos ${minutes} min. Vuelve a leer el archivo antes de cambiarlo y conserva sus cambios; send_to_session llega a esa sesión.`,
    editedFooter: (name, who) => `${name} también editado por ${who}`,
    owed: (n, from) => (n === 1 && from ? `debe una respuesta a "${from}"` : `debe ${n} ${plural(n, "respuesta", "respuestas")}`),
    open: (n, waiting) => `${n} ${plural(n, "tarea", "tareas")} en curso` + (waiting ? ` (${waiting} esperando)` : ""),
    ready: (n) => `${n} ${plural(n, "respuesta", "respuestas")} por recoger`,
  },
};

// The catalog for a LICH_PROMPT_LANG value: "pt-BR", "pt_br", "zh-Hans", "es-MX" and
// the like pick by their language; anything else, or nothing, is English.
export function texts(lang) {
  const code = String(lang || "").toLowerCase();
  if (code.startsWith("pt")) return CATALOGS["pt-BR"];
  if (code.startsWith("zh")) return CATALOGS["zh-CN"];
  if (code.startsWith("es")) return CATALOGS.es;
  return CATALOGS.en;
}
